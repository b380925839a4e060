/** The swap SDK's pricing inputs, as the service's PumpSwap venue prices with them. */
export { swapPricing } from '@svc/chain';
