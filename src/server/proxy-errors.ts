/** OpenAI-style error bodies (`{ error: { message, type, param, code } }`), as clients of the API expect. */

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAiError(message: string, type = 'invalid_request_error', code: string | null = null, param: string | null = null): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}

/** A request the proxy refuses before forwarding it (bad naming, a body that is not a chat request). */
export class ProxyRequestError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ProxyRequestError';
  }
}
