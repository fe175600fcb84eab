/** Sending a request to the upstream: its URL, the headers worth passing on, keep-alive by fetch's shared pool. */

/** Request headers passed to the upstream (others, such as our naming headers, stay here). */
const FORWARDED = ['authorization', 'openai-organization', 'openai-project', 'accept'];

/** Response headers passed back to the agent: what clients read for retries, tracing and versions. */
const RETURNED = ['retry-after', 'retry-after-ms', 'x-request-id', 'x-spindle-policy-version', 'x-ratelimit-remaining-requests', 'x-ratelimit-remaining-tokens'];

export function returnedHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RETURNED) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

export function upstreamUrl(upstream: string, path: string): string {
  return `${upstream.replace(/\/+$/, '')}${path}`;
}

export function forwardHeaders(headers: Record<string, string | string[] | undefined>, withBody: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  if (withBody) out['content-type'] = 'application/json';
  return out;
}

/** The message of an OpenAI-style error body, or the start of whatever the upstream sent. */
export function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: use the text
  }
  return body.slice(0, 500);
}
