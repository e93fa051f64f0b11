/**
 * The contract and the flag checks use `zod/mini`, which builds a schema at a fraction of the classic
 * API's cost (an API command builds its route's schemas at every start), but sets no locale: every
 * message would read "Invalid input". Imported for its effect, this sets English.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());
