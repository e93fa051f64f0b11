/** The service's sense of time; tests inject a clock they move by hand. */
export interface ServiceClock {
  now(): Date;
}
