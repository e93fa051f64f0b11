/** undici's files that proxy-agent.ts imports instead of its index (docs/decisions.md); public: undici has no "exports". */
declare module 'undici/lib/*';
