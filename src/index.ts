/** The library face of facectl: the typed client and the contract, for users' own Node scripts. */
export * from './contract/index.js';
