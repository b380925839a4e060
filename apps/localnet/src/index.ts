export { startLocalnet, type Localnet, type LocalnetOptions } from './server';
export { startBundledLocalnet } from './bundled';
export { LocalChain, FAUCET } from './chain/localChain';
export { GraduationKeeper, MIGRATOR, type Migration } from './keeper/graduation';
