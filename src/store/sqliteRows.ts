/** Stored rows of the SQLite store turned back into records, each checked, naming the row when damaged. */
import type { CheckpointRecord, Group, MetricPoint, Run, Trajectory } from '../core/trajectory.ts';
import { CorruptRecordError } from './errors.ts';
import { readJson, readRecord } from './records.ts';
import { checkpointSchema, groupSchema, metricPointSchema, runSchema, trajectorySchema } from './recordSchemas.ts';

export interface RunRow {
  id: string;
  kind: string;
  env: string;
  env_options: string;
  policy: string;
  config: string;
  status: string;
  created_at: string;
  finished_at: string | null;
  summary: string | null;
  owner: string | null;
}

/** A trajectory row as listed: the JSON holds the record, the columns are for queries. */
export interface TrajectoryRow {
  seq: number;
  id: string;
  run_id: string | null;
  data: string;
}

export interface GroupRow {
  seq: number;
  id: string;
  run_id: string | null;
  env: string;
  seed: number;
  trajectory_ids: string;
}

export interface MetricRow {
  run_id: string;
  step: number;
  name: string;
  value: number;
}

export interface CheckpointRow {
  run_id: string;
  step: number;
  path: string;
  policy_version: number;
  created_at: string;
  metrics: string;
}

export function runFromRow(row: RunRow): Run {
  const json = (column: string, text: string) => readJson('runs', row.id, column, text);
  return readRecord(runSchema, 'runs', row.id, {
    id: row.id,
    kind: row.kind,
    env: row.env,
    envOptions: json('env_options', row.env_options),
    policy: row.policy,
    config: json('config', row.config),
    status: row.status,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    summary: row.summary === null ? null : json('summary', row.summary),
    owner: row.owner === null ? null : json('owner', row.owner),
  });
}

export function trajectoryFromRow(row: TrajectoryRow): Trajectory {
  const trajectory = readRecord(trajectorySchema, 'trajectories', row.id, readJson('trajectories', row.id, 'data', row.data));
  if (trajectory.id !== row.id || trajectory.runId !== row.run_id) {
    throw new CorruptRecordError(
      'trajectories',
      row.id,
      `its JSON names id ${trajectory.id} in run ${trajectory.runId}, its columns id ${row.id} in run ${row.run_id}`,
    );
  }
  return trajectory;
}

export function groupFromRow(row: GroupRow): Group {
  return readRecord(groupSchema, 'trajectory_groups', row.id, {
    id: row.id,
    runId: row.run_id,
    env: row.env,
    seed: row.seed,
    trajectoryIds: readJson('trajectory_groups', row.id, 'trajectory_ids', row.trajectory_ids),
  });
}

export function metricFromRow(row: MetricRow): MetricPoint {
  return readRecord(metricPointSchema, 'metrics', `${row.run_id}/${row.step}/${row.name}`, {
    runId: row.run_id,
    step: row.step,
    name: row.name,
    value: row.value,
  });
}

export function checkpointFromRow(row: CheckpointRow): CheckpointRecord {
  const key = `${row.run_id}/${row.step}`;
  return readRecord(checkpointSchema, 'checkpoints', key, {
    runId: row.run_id,
    step: row.step,
    path: row.path,
    policyVersion: row.policy_version,
    createdAt: row.created_at,
    metrics: readJson('checkpoints', key, 'metrics', row.metrics),
  });
}
