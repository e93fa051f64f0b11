import type { BILLING_SOURCES } from '../contract/common.js';

export type BillingSource = (typeof BILLING_SOURCES)[number];
