/**
 * Log lines gathered into batches before they reach the destination. The service writes a line
 * per request; sonic-boom's own buffer (minLength) measures the UTF-8 length of everything it has
 * pending on every line it takes, so a 4 KiB buffer cost more per line than the line itself.
 * Here a batch is an array of lines and a count of characters: the destination receives one
 * string of at least `flushChars` characters, or what is pending when flush() is called.
 */
export interface LineSink {
  write(text: string): unknown;
}

export class BatchedLines {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly flushChars: number,
  ) {}

  /** pino's destination interface: one serialized line, newline included. */
  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.flushChars) this.flush();
    return true;
  }

  /** Hands what is pending to the sink, as one write. */
  flush(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink.write(text);
  }
}
