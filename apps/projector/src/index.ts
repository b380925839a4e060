export * from './runProjector';
