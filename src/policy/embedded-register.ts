/**
 * Registers `--policy model:DIR` with the policy resolver. Importing this module only registers the
 * name: the engine starts, and the checkpoint loads, when a `model:` policy is resolved.
 */
import { UsageError } from '../core/errors.ts';
import { registerPolicyResolver } from './resolve.ts';

registerPolicyResolver(
  'model',
  async (dir) => {
    if (dir.length === 0) throw new UsageError('--policy model:DIR needs a checkpoint folder, e.g. model:.spindle/runs/r1/checkpoints/latest');
    const { loadEmbeddedPolicy } = await import('./embedded-load.ts');
    return loadEmbeddedPolicy(dir);
  },
  'model:DIR',
);
