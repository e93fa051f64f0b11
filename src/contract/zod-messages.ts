/** `zod/mini` (a fraction of the classic API's start-up cost) sets no locale: every message would read "Invalid input". */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());
