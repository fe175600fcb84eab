/** What every loss returns: the scalar to minimise and named scalar metrics (ParamTrainer's LossOutput form). */
import type { Tensor } from '../model/engine.ts';

export type LossWithMetrics = [loss: Tensor, metrics: Record<string, Tensor>];
