/**
 * Which process is running a run, and whether it still is. A run whose process was killed without
 * a chance to record its end (SIGKILL, the kernel's out-of-memory killer, a power cut) would stay
 * "running" forever; the store records the process that created or reopened the run, so later
 * commands can tell such a run from a live one (dead-runs.ts) and refuse to resume a live one.
 *
 * A process is named by host, pid and, where Linux's /proc has them, the boot id and the process's
 * start time: a pid is reused after the process ends or the machine restarts, the pair of them is not.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Run, RunOwner } from '../core/trajectory.ts';

/** 'unknown': on another host, so it cannot be checked from here. */
export type OwnerState = 'alive' | 'gone' | 'unknown';

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function bootId(): string | null {
  return readText('/proc/sys/kernel/random/boot_id')?.trim() || null;
}

/** Field 22 of /proc/PID/stat; null when the process or /proc is not there. */
function startTicks(pid: number): number | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // Field 2 (the command name, in parentheses) may hold spaces: count fields after its closing ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[22 - 3]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}

let self: Readonly<RunOwner> | null = null;

/** This process (read once). */
export function currentOwner(): Readonly<RunOwner> {
  return (self ??= Object.freeze({ host: hostname(), pid: process.pid, bootId: bootId(), startTicks: startTicks(process.pid) }));
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function ownerState(owner: RunOwner): OwnerState {
  // This machine's host name and boot id do not change while this process runs: read them once.
  const me = currentOwner();
  if (owner.host !== me.host) return 'unknown';
  if (owner.bootId !== null && me.bootId !== null && owner.bootId !== me.bootId) return 'gone';
  if (!pidExists(owner.pid)) return 'gone';
  const ticks = startTicks(owner.pid);
  if (owner.startTicks !== null && ticks !== null && owner.startTicks !== ticks) return 'gone';
  return 'alive';
}

export const describeOwner = (owner: RunOwner): string => `process ${owner.pid} on ${owner.host}`;

/** The process still running `run` on this machine; null when the run ended, its process is gone, or it cannot be checked. */
export function liveOwner(run: Run): RunOwner | null {
  return run.status === 'running' && run.owner && ownerState(run.owner) === 'alive' ? run.owner : null;
}
