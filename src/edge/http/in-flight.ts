// The requests an adapter has taken and not yet finished (answered, or their client gone), so that
// a stopping edge closes only once each is answered (HttpServer.close).

export class InFlight {
  private count = 0;
  private idle: (() => void)[] = [];

  /** A request taken; call the returned function once when it is finished (more calls are ignored). */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
    };
  }

  /** Resolves when none is in flight, or after `timeoutMs` with how many still are. */
  async settled(timeoutMs: number): Promise<number> {
    if (this.count === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.idle.push(resolve);
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
    return this.count;
  }
}
