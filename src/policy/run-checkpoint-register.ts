/**
 * Registers `--policy run:RUN[@STEP]` with the policy resolver: a run's checkpoint (the latest when no
 * step is given), loaded like `model:DIR` (a LoRA adapter merged in). Importing this module only
 * registers the name; the store opens, and the engine starts, when such a policy is resolved.
 */
import { registerPolicyResolver } from './resolve.ts';

registerPolicyResolver(
  'run',
  async (rest, context) => {
    const { resolveRunCheckpoint } = await import('./run-checkpoint.ts');
    const found = await resolveRunCheckpoint(rest, context.db, '--policy');
    const { loadEmbeddedPolicy } = await import('./embedded-load.ts');
    return loadEmbeddedPolicy(found.dir, { name: `run:${found.runId}@${found.step}`, policyVersion: found.record.policyVersion });
  },
  'run:RUN[@STEP]',
);
