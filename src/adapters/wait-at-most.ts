/**
 * Waits for `work` to settle, or `ms` at most (forever when `ms` is Infinity), whichever is first;
 * never rejects. For shutdown, which leaves behind what outlasts its share of the budget.
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  const settled = work.then(
    () => {},
    () => {},
  );
  if (ms === Number.POSITIVE_INFINITY) return settled;
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([settled, new Promise<void>((done) => (giveUp = setTimeout(done, ms)))]);
  clearTimeout(giveUp);
}
