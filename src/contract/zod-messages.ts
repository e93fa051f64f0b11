/**
 * The contract and the flag checks use `zod/mini`, zod's functional API (`z.optional(x)` rather than
 * `x.optional()`): it builds a schema at a fraction of the classic API's cost, and an API command
 * builds its route's schemas at every start (budget row: one API command, <= 0.85x d245c82's time).
 * zod/mini sets no locale, so every message would read "Invalid input": imported for its effect by
 * every module that builds schemas, this sets English, as the classic API does.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());
