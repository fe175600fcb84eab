/** The current time as an ISO string, formatted once per millisecond (thousands of episodes end in the same one). */
let lastMs = -1;
let lastIso = '';

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
