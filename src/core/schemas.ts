/** Validation schemas for data that enters from outside (user env outputs, HTTP bodies, stored JSON). */
import { z } from 'zod';

export const toolCallSchema = z.object({
  id: z.string(),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});

export const messageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  reasoning: z.string().optional(),
  toolCalls: z.array(toolCallSchema).optional(),
  toolCallId: z.string().optional(),
  name: z.string().optional(),
});

export const toolSpecSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, _ or -'),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  informational: z.boolean().optional(),
});

const finite = z.number().refine(Number.isFinite, 'must be a finite number');

export const envResetSchema = z.object({
  observation: z.string(),
  tools: z.array(toolSpecSchema).min(1, 'an env must offer at least one tool'),
  info: z.record(z.string(), z.unknown()).optional(),
});

export const envStepSchema = z.object({
  observation: z.string(),
  reward: finite,
  rewardParts: z.record(z.string(), finite).optional(),
  done: z.boolean(),
  truncated: z.boolean(),
  info: z.record(z.string(), z.unknown()).optional(),
});

/** Formats a zod error as `field.path: message; ...` so a user sees which field is wrong. */
export function describeZodError(error: z.ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
