/** A dependency everywhere, so tests pass a fixed one. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** JWT `NumericDate`: whole seconds, rounded down. */
export const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** True from the instant `exp` (epoch seconds) on: `expireAt` is exact, with no tolerance. */
export const hasExpired = (exp: number, now: Date) => now.getTime() >= exp * 1000;
