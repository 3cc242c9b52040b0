/**
 * Time, one way everywhere: a `Clock` gives the current instant as a Date, passed in as a
 * dependency (tests pass a fixed one); JWT times are whole epoch seconds.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** A Date as JWT `NumericDate`: whole seconds since the epoch, rounded down. */
export const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** True from the instant `exp` (epoch seconds) on: `expireAt` is exact, with no tolerance. */
export const hasExpired = (exp: number, now: Date) => now.getTime() >= exp * 1000;
