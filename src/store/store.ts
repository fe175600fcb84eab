/**
 * The Store contract: where runs, trajectories, groups, metrics and checkpoint records live.
 *
 * Every method is async because a PostgreSQL implementation sits behind the same contract.
 * Nothing here assumes one process: records refer to each other by string ids, every write is
 * an idempotent upsert (a worker that retries after a lost reply changes nothing), and a write
 * that has resolved is durable.
 */
import type {
  CheckpointRecord,
  Group,
  MetricPoint,
  Run,
  RunKind,
  RunOwner,
  RunStatus,
  Trajectory,
  TrajectoryStatus,
} from '../core/trajectory.ts';

/** One page of a listing; pass `nextCursor` back as `cursor` for the next page (null: no more). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageQuery {
  /** Items per page: 1..1000, default 100. */
  limit?: number;
  /** An opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

export interface RunQuery {
  kind?: RunKind;
  status?: RunStatus;
  /** Most recent first; at most this many (default 100, max 1000). */
  limit?: number;
}

export interface TrajectoryQuery extends PageQuery {
  groupId?: string;
  status?: TrajectoryStatus;
  /**
   * Only trajectories whose every turn was sampled by weights of at least this version
   * (a trainer's bound on how stale a rollout may be).
   */
  minPolicyVersion?: number;
}

export interface MetricQuery {
  /** Only these metric names (all when absent). */
  names?: string[];
  /** Only steps >= fromStep. */
  fromStep?: number;
}

/** How a run ended; written once the run stops. */
export interface RunEnd {
  status: Exclude<RunStatus, 'running'>;
  finishedAt: string;
  summary: Record<string, unknown> | null;
}

export interface Store {
  /**
   * Records a new run. Creating a run that already exists with the same kind, env, env options,
   * policy and config is a no-op (a retry); the same id with different content is an error.
   */
  createRun(run: Run): Promise<void>;
  /** Marks a run finished or failed with its summary. Repeating it overwrites the end record. */
  finishRun(runId: string, end: RunEnd): Promise<void>;
  /**
   * Marks a stopped run running again (a resumed train run, a restarted proxy): its end record is
   * cleared and this process becomes its owner (createRun records the creating process likewise).
   */
  reopenRun(runId: string): Promise<void>;
  /**
   * Marks a run failed whose process died without recording its end (dead-runs.ts), only while it is
   * still running and owned by `owner`: false when it ended or was reopened by another process meanwhile.
   */
  abandonRun(runId: string, owner: RunOwner, end: Omit<RunEnd, 'status'>): Promise<boolean>;
  getRun(runId: string): Promise<Run | null>;
  listRuns(query?: RunQuery): Promise<Run[]>;

  /**
   * Saves trajectories with every turn, all in one transaction: all are stored or none.
   * An existing id is replaced (idempotent upsert). Their runs must exist.
   */
  saveTrajectories(trajectories: Trajectory[]): Promise<void>;
  getTrajectory(id: string): Promise<Trajectory | null>;
  /** The run's trajectories in the order they were first saved. */
  listTrajectories(runId: string, query?: TrajectoryQuery): Promise<Page<Trajectory>>;

  /** Saves groups in one transaction (upsert by id). A group may name trajectories not saved yet. */
  saveGroups(groups: Group[]): Promise<void>;
  getGroup(id: string): Promise<Group | null>;
  /** The run's groups in the order they were first saved. */
  listGroups(runId: string, query?: PageQuery): Promise<Page<Group>>;

  /** Records per-step metrics in one transaction; a repeated (run, step, name) keeps the latest value. */
  appendMetrics(points: MetricPoint[]): Promise<void>;
  /** The run's metric points ordered by step, then name. */
  getMetrics(runId: string, query?: MetricQuery): Promise<MetricPoint[]>;

  /** Records a checkpoint (upsert by run and step). */
  saveCheckpoint(record: CheckpointRecord): Promise<void>;
  /** The run's checkpoints ordered by step. */
  listCheckpoints(runId: string): Promise<CheckpointRecord[]>;

  /** The folder holding the run's files (checkpoints, plots, reports); created when missing. */
  runDir(runId: string): string;

  close(): Promise<void>;
}
