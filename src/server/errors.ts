/** OpenAI-style errors: `{ error: { message, type, param, code } }` with the matching HTTP status. */

export type ApiErrorType = 'invalid_request_error' | 'not_found_error' | 'server_error' | 'authentication_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Errors fastify raises before a handler runs (bad JSON, body too large, wrong content type) as ApiErrors. */
export function fromFrameworkError(error: { statusCode?: number; code?: string; message: string }): ApiError {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  if (status === 413) return new ApiError(413, `request body too large: ${error.message}`, 'invalid_request_error', null, 'request_too_large');
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, error.message, 'invalid_request_error', null, 'unsupported_media_type');
  if (status === 400) return new ApiError(400, `malformed request: ${error.message}`, 'invalid_request_error', null, 'invalid_json');
  if (status === 404) return new ApiError(404, error.message, 'not_found_error', null, 'not_found');
  return new ApiError(status, status >= 500 ? `internal error: ${error.message}` : error.message, status >= 500 ? 'server_error' : 'invalid_request_error');
}
