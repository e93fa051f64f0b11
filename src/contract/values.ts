/** The contract's lists of values, free of zod: the command declarations read them at start-up. */

export const PERSPECTIVES = ['first-person', 'third-person'] as const;

/** The billing sources of compile interviews, in the spec's priority order. */
export const BILLING_SOURCES = ['oauth', 'compile', 'credits'] as const;

/** The seed names only `document` (others "not shown"); the local service also accepts `transcript`. */
export const IMPORT_TYPES = ['document', 'transcript'] as const;

/** The seed's scope form, v1:*: `v1:` and something after it. What follows is the service's own. */
export const SEED_SCOPE_PATTERN = /^v1:.+$/s;
export const SEED_SCOPE_RULE = 'the form v1:* (v1: followed by the scope)';

/** Scope areas and actions the local service knows (local-service.md, local). `v1:*` grants everything. */
export const SCOPE_AREAS = ['keys', 'faces', 'compile', 'oauth'] as const;
export const SCOPE_ACTIONS = ['read', 'write'] as const;
