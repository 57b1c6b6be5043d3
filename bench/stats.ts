/** The middle value of a list of measurements (the upper middle of an even count); 0 for none. */
export const median = (numbers: readonly number[]): number =>
  [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] ?? 0;
