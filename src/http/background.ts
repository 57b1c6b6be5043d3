/**
 * Writes a request starts but does not wait for (such as an API key's last-used date). Shutdown
 * and tests wait for them before closing the database, so none is cut off half-way.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<void>>();

  /** Runs `task` without blocking the caller; failures go to `onError`, never to the request. */
  run(task: () => Promise<unknown>, onError: (error: unknown) => void): void {
    const settled: Promise<void> = Promise.resolve()
      .then(task)
      .then(() => undefined, onError)
      .finally(() => {
        this.pending.delete(settled);
      });
    this.pending.add(settled);
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
