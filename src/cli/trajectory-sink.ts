/** Writes finished trajectories and their groups to the store in batches: one transaction per batch keeps long runs fast. */
import type { Group, Trajectory } from '../core/trajectory.ts';
import type { Store } from '../store/store.ts';

/** `all`, `none`, or the first N finished trajectories. */
export type SavePolicy = number | 'all' | 'none';

export class TrajectorySink {
  private buffer: Trajectory[] = [];
  private groups: Group[] = [];
  private saved = 0;
  /** With a number to save: the ids taken (at most that many), to name only those in their groups. */
  private readonly taken = new Set<string>();
  private lastFlush = Date.now();

  constructor(
    private readonly store: Store,
    private readonly save: SavePolicy,
    private readonly batchSize = 256,
    private readonly maxDelayMs = 1000,
  ) {}

  /** Buffers one trajectory; flushes when the batch is full or a second has passed, so a crash loses little. */
  async add(trajectory: Trajectory): Promise<void> {
    if (this.save === 'none') return;
    if (typeof this.save === 'number') {
      if (this.saved + this.buffer.length >= this.save) return;
      this.taken.add(trajectory.id);
    }
    this.buffer.push(trajectory);
    if (this.buffer.length >= this.batchSize || Date.now() - this.lastFlush >= this.maxDelayMs) await this.flush();
  }

  /**
   * Buffers a finished group's record (after its trajectories were added), saved with the next flush.
   * It names only its stored trajectories: with a number to save, a group past it is not saved and
   * the one it cuts through is saved with the ones taken.
   */
  async addGroup(group: Group): Promise<void> {
    if (this.save === 'none') return;
    if (typeof this.save === 'number') {
      const stored = group.trajectoryIds.filter((id) => this.taken.has(id));
      if (stored.length === 0) return;
      group = { ...group, trajectoryIds: stored };
    }
    this.groups.push(group);
    if (this.groups.length >= this.batchSize) await this.flush();
  }

  async flush(): Promise<void> {
    this.lastFlush = Date.now();
    const batch = this.buffer;
    const groups = this.groups;
    this.buffer = [];
    this.groups = [];
    if (batch.length > 0) await this.store.saveTrajectories(batch);
    this.saved += batch.length;
    if (groups.length > 0) await this.store.saveGroups(groups);
  }

  get savedCount(): number {
    return this.saved;
  }
}

export function parseSavePolicy(raw: string): SavePolicy {
  if (raw === 'all' || raw === 'none') return raw;
  if (/^\d+$/.test(raw)) return Number(raw);
  return NaN;
}
