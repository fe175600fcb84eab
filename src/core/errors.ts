/** An error caused by the user's input (a flag, a config field, a module): the CLI exits 2 with its message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
