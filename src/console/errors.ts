import type { ApiError } from '../protocol/console-api.js';

export type FieldProblem = NonNullable<ApiError['error']['fields']>[number];

/**
 * An /api failure meant for the operator: its message and fix are sent as they are. Anything else thrown
 * becomes a generic 500, so internal messages never reach the client (koa's `expose` rule).
 */
export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fix?: string,
    readonly fields?: FieldProblem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ConsoleError';
  }

  toBody(): ApiError {
    return {
      error: {
        message: this.message,
        ...(this.fix ? { fix: this.fix } : {}),
        ...(this.fields ? { fields: this.fields } : {}),
      },
    };
  }
}
