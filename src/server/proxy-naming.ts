/**
 * Which trajectory (and task) a proxied call belongs to. The agent names them either with headers
 * (`x-spindle-trajectory`, `x-spindle-task`) or in the base URL (`/t/{trajectoryId}/v1/...`,
 * `/t/{trajectoryId}/task/{taskId}/v1/...`) for agents that can only change the base URL. When both
 * are given they must agree.
 */
import { ProxyRequestError } from './proxy-errors.ts';

export const TRAJECTORY_HEADER = 'x-spindle-trajectory';
export const TASK_HEADER = 'x-spindle-task';

/** Ids travel in URLs and name store records: letters, digits and `_ . : -`, at most 128. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface CallNaming {
  trajectoryId: string;
  taskId: string | null;
}

export interface NamingSources {
  params: { trajectoryId?: string; taskId?: string };
  headers: Record<string, string | string[] | undefined>;
}

export function checkId(value: string, field: string): string {
  if (!ID_PATTERN.test(value)) {
    throw new ProxyRequestError(400, `${field}: '${value.slice(0, 64)}' is not a valid id (1-128 letters, digits, _ . : or -, starting with a letter or digit)`, field);
  }
  return value;
}

function header(headers: NamingSources['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function pick(fromPath: string | undefined, fromHeader: string | undefined, what: string): string | undefined {
  if (fromPath !== undefined && fromHeader !== undefined && fromPath !== fromHeader) {
    throw new ProxyRequestError(400, `the ${what} id in the URL ('${fromPath}') and in the header ('${fromHeader}') differ`);
  }
  return fromPath ?? fromHeader;
}

export function callNaming({ params, headers }: NamingSources): CallNaming {
  const trajectoryId = pick(params.trajectoryId, header(headers, TRAJECTORY_HEADER), 'trajectory');
  if (trajectoryId === undefined) {
    throw new ProxyRequestError(
      400,
      `name the trajectory: send the header '${TRAJECTORY_HEADER}: ID' or use the base URL /t/ID/v1`,
      TRAJECTORY_HEADER,
    );
  }
  const taskId = pick(params.taskId, header(headers, TASK_HEADER), 'task');
  return {
    trajectoryId: checkId(trajectoryId, 'trajectoryId'),
    taskId: taskId === undefined ? null : checkId(taskId, 'taskId'),
  };
}
