export * from './request';
export * from './pipeline';
export * from './settlement';
export * from './recovery';
export * from './refusals';
export * from './handout';
export * from './observe';
