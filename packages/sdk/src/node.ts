// `@eng/sdk/node`: the Node entry point under an explicit name.
export * from './index.ts';
