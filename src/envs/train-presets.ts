/**
 * `spindle train` presets of the built-in envs. The train defaults are Blackjack's (128-token rows,
 * 4 × 64 episodes a step); Blackjack's preset swaps the estimator and sets the step count. The
 * presets of envs with longer episodes make a run fit: rows long enough for the episodes (measured
 * from the warm start's demonstrations) and fewer episodes a step. They are not yet tuned to train
 * these envs well (see each constant).
 */

/**
 * Blackjack: the critic estimator (advantage/critic.ts). Under episode GRPO a hand's one outcome
 * was each decision's whole signal, and the hands whose moves differ by little in value (hard
 * 13–16) stayed near a coin flip whatever the dealer showed: the default handed over −0.0693,
 * −0.0664, −0.0707, −0.0749 on seeds 0–3 (one within 0.02 of the optimum −0.0466). Judged by action
 * values pooled over the run's earlier hands (still from outcomes only), the same RL from the same
 * warm starts handed over −0.0574, −0.0561, −0.0472 and −0.0520 (all four within; docs/results.md,
 * "The critic"), and its policies stick on hard 13–16 against 2–6 and hit against 7–A. A step
 * trains about three times GRPO's samples (no tied groups to drop), so a run takes longer: 200
 * steps, not 250. At 200 steps seeds 0–3 handed over −0.0572, −0.0600, −0.0529, −0.0533, all still
 * within, and the command took 853 s (seed 0) alone on 2 cores with the warm start (earlier builds'
 * figures: docs/results.md, "The critic").
 * The sab and natural rules keep 250: their runs (seed 0, from scratch) were 0.0229 and 0.0217 from
 * their optima after 200 steps, 0.0082 and 0.0138 after 250 on this build (sab's warm start starts
 * far: its greedy table scores −0.75 where the default rules' scores −0.23).
 */
export function blackjackTrainPreset(options: Record<string, unknown>): Record<string, unknown> {
  const variant = options.sab === true || options.natural === true;
  return { advantage: { estimator: 'critic' }, steps: variant ? 250 : 200 };
}

/**
 * Ten-turn envs (bandit, kelly, hmm, market; newsvendor's five): an episode is 400–800 tokens, so
 * a step plays 8 × 4 episodes (the bandit: 3 rows of 608 tokens an update), and the sampler decodes
 * at most 64 rows at once: its keys and values grow with rows × context, and the bandit's
 * 200-episode evaluation at the default 256 rows went past jax-js's 4 GiB (every episode failed,
 * measured with the run's warm start in a fresh process), where 64 rows peaked at 0.83 GB.
 * Each token's KL is bounded past 10 (`loss.klMax`: k3 continues along its tangent there, so a
 * token's pull is at most 12.6): their answers are numbers of several tokens, and a digit the
 * policy had made unlikely, sampled anyway, brought a k3 gradient in the hundreds (newsvendor,
 * seed 1, plain k3: gradient norm 455–1,360 at steps 6–9 of a dense run, then every answer illegal
 * from step 10 to 44; episode GRPO: 634 at step 6, 402 at step 11). With the value clamped at 10
 * (verl's low_var_kl; this preset until the tangent replaced it) the same dense run stayed below 23
 * and handed over 157.5 after 30 steps (plain k3: 157.5 after 60), but past the clamp a token
 * brought no gradient. A dense hmm run (seed 1, clamped) went from 0 % to 100 % illegal answers in
 * one ordinary update (norm 1.7) at step 12 and stayed there: every decision's answers were the
 * same refused one, so every group tied and was dropped, and nothing, not even the KL, trained.
 */
export const multiTurnTrainPreset: Record<string, unknown> = {
  groupSize: 8,
  batchSeeds: 4,
  update: { rowLength: null },
  rollout: { maxBatchRows: 64 },
  // β held constant, as these envs were measured (the default's anneal to 0 was measured on Blackjack only).
  loss: { klMax: 10, klBetaEndRatio: 1 },
};

/**
 * Nim: 2–6 moves of ~30 tokens an episode, ~300–400 tokens packed; a step plays 8 × 8 episodes
 * in updates of 5 rows × 352 tokens. Its warm start leaves many answers illegal (a count larger
 * than the heap: 44 % of the sampled answers, 9.7 % greedy; heaps=random, starts=winning,
 * opponent=random, seed 1), and under invalidAnswers 'share' a refused answer that is retried
 * shares its episode's advantage, so a win after illegal tries can teach them. Measured from that warm start (one thread, sharing the
 * cores): the defaults then ('share', no klMax) diverged in 5 steps (KL to the warm start 0.004 → 1.0, gradient norm 1.3 →
 * 579); with `loss.klMax` 10 the gradient stayed below 5 but the greedy policy collapsed into
 * illegal answers (step 20: 59.5 % invalid, 1 % wins); with klMax 10 and every refused answer
 * trained at advantage −1 (`samples.invalidAnswers` 'penalize', now every env's default) the greedy policy at step 40 won
 * 46.5 % with 1.5 % invalid (warm start: 41 %, 9.7 %), at 60–90 s a step.
 * The KL's weight is 0.05: at β 1 the KL-regularised optimum is the warm start tilted by at most
 * about e^(A/β) per answer (k3's forward-KL pull holds it softer still, loss-kl.ts), and with
 * advantages of unit spread that is too little to move a Nim answer.
 * Measured from one warm start (the same options, seed 1, two threads): at β 1, 78 steps left the
 * greedy evaluation at 0.09 (54.5 % wins) at steps 25, 50 and 75, the same policy each time, and
 * the sampled answers ~30 % refused (the warm start's 52–69 % times ~e^−1); at β 0.05 greedy went
 * 0.09 → 0.32 / 0.39 / 0.40 / 0.33 at steps 25 / 50 / 75 / 100, sampled refused answers 30 % → 3.6 %
 * (the mean of steps 51–100), and the handed-over policy scored 0.352 [0.270, 0.434] on 500 seeds
 * (random −0.024, warm start 0.036).
 * Not in it: refused answers in the warm start (`warmStart.refusals` 0.2, warm-start-refusals.ts).
 * They taught the warm start to answer after a refusal (retries with no parsable call: 77 of 80
 * sampled at seed 1 without them, 1 of 128 with them) and lifted its greedy return on 2,000 seeds
 * from −0.091 to 0.086, but 100 RL steps from it handed over 0.204 [0.161, 0.247] where the same
 * seed without them handed over 0.323 [0.282, 0.364] (seed 1, one thread; docs/results.md, "Nim").
 */
export const nimTrainPreset: Record<string, unknown> = {
  groupSize: 8,
  batchSeeds: 8,
  update: { rowLength: null },
  loss: { klMax: 10, klBeta: 0.05, klBetaEndRatio: 1 },
};

/**
 * Dense envs (bandit, kelly, newsvendor, hmm: the env scores every legal action of a decision
 * exactly): each decision draws 8 answers from one prompt and trains them against each other by
 * their exact expected rewards (`advantage.estimator` 'dense'), free of the episode's luck, on 8
 * one-sample episodes a step (newsvendor, seed 1: 0.82 normalised after 30 steps where the
 * ten-turn preset's episode GRPO reached 0.22 after 60). Refused answers train at −1 (the default), also where all
 * 8 were refused (such a decision ties and would otherwise be dropped). A step's 300–640 answers
 * fill 20–35 updates of 2–4 rows; each is an Adam step of about lr whatever its gradient, and a
 * dense hmm run (seed 1) went from 0 % to 61 % refused answers over steps 6–9, as the warmup
 * brought lr to 1e-3, with 34 updates a step: so the step's gradients are accumulated into 4
 * updates (4 mini-batches). So accumulated, hmm kept 0–3.8 % refused answers a step but did not learn in
 * 30 steps (greedy 5.59 / 5.63 / 4.38 at 10 / 20 / 30 against random 4.98, the warm start 4.38 and
 * the oracle 8.05; KL 0.0002–0.05 a token: it barely moved; the handed-over policy guesses state A
 * at all 640 decisions of 64 seeds, as the warm start did at 638); newsvendor with this preset
 * handed over 157.5 [148.5, 166.5] on 300 seeds after 50 steps (normalised 0.82, as without it),
 * which is the constant order 8 in every state: RL learned the best single order, not to read the
 * day's demand, which the same warm start learns in 200 updates supervised on oracle answers (README).
 * From one warm start, 25 steps each: 32 answers a decision handed over 157.5 again, 16 updates a
 * step 157.75, klBeta 0.1 158.8.
 * Kelly (seed 1, 12 steps): greedy −5.54 (warm start) → 0.58 at step 8 → −0.67 at step 12 on 64
 * seeds where random scores −1.24 and the oracle 0.96; handed over (mean of steps 8–12) 0.827 on
 * 300 seeds (random −0.671, oracle 1.247, warm start −4.555: normalised 0.78).
 * Bandit (seed 1, 30 steps): handed over 5.28 on 300 seeds (random 5.17, warm start 5.18, oracle
 * 6.50: normalised 0.08; regret 2.25 against random's 2.39 and the oracle's 0.98); at β 0.1 for 100
 * steps 0.56 (its preset, below). With `report=true` the report answers would get no credit from
 * action values, so those runs keep the ten-turn preset's episode GRPO.
 */
export function denseTrainPreset(options: Record<string, unknown>): Record<string, unknown> {
  if (options.report === true) return multiTurnTrainPreset;
  return {
    ...multiTurnTrainPreset,
    groupSize: 1,
    batchSeeds: 8,
    episode: { decisionSamples: 8 },
    advantage: { estimator: 'dense' },
    update: { rowLength: null, accumulate: true, miniBatches: 4 },
  };
}

/**
 * Newsvendor: the dense preset with the KL at β 0.1 for 150 steps. Measured (seed 1,
 * run_77c277ad5f39419b, 3,427 s on two threads): the handed-over policy (the mean of steps 90–150)
 * orders 12 on days whose critical-fractile order is high (mostly 11 and up) and 8 otherwise, the
 * first dense run that read the day (at β 1, 30–60 steps, and at β 0.1 for 25 steps, every run
 * handed over the constant 8: normalised 0.82–0.83): 162.9 [158.9, 166.9] on its 2,000 held-out
 * seeds (random 36.5, oracle 176.0: normalised 0.906), 169.8 on seeds 1–300 (0.908; the rule
 * order-mean 0.959). Its greedy evaluations: 166.2 at step 25, the same 167.125 at steps 50–125.
 */
export function newsvendorTrainPreset(options: Record<string, unknown>): Record<string, unknown> {
  return denseAtBetaTenth(options, 150);
}

/**
 * Bandit: the dense preset with the KL at β 0.1 for 100 steps, a checkpoint every 10 steps, and the
 * policy handed over chosen on 1,000 validation seeds among the average of steps 60–100 and RL's own
 * weights at steps 60, 70, …, 100 (`select`, handover-select.ts): late in a run the single steps'
 * weights still swing by up to 0.5 normalised, and neither the average nor the last step is the
 * better one across seeds. Handing over the average, five seeds scored 0.60 (seed 1), 0.89 (seed 2,
 * seed 1's warm start), 0.72, 0.90 and 0.72 (seeds 3–5, each from scratch, one thread:
 * run_5c3b2a5df9554538, run_fe6b71f07a8f4679, run_fcc980bea43a4683, 2,321–2,468 s), normalised on
 * the 300 held-out seeds; the choice made from seeds 3–5's checkpoints scored 0.84, 0.90 and 0.91
 * there, and seeds 6–9 with it handed over 0.71, 0.76, 0.66 and 0.86 (the average would have scored
 * 0.66, 0.85, 0.64 and 0.70; docs/results.md, "Bandit"). That was on 300 validation seeds, which
 * do not tell apart candidates within about 0.1 in return: chosen on 1,000 (seeds 3–9's stored
 * checkpoints), the same seven runs hand over 0.84, 0.90, 0.96, 0.92, 0.85, 0.93 and 0.86, mean
 * 0.89 (300 seeds: 0.81; the best candidate on the held-out seeds each time: 0.90). A live run at
 * seed 10 (2,119 s on two threads, the choice 601 s) chose step 80 by 0.027 in validation return
 * and handed over 0.71 where its average scored 0.89: over seeds 3–10, 0.87 against 0.76. Not in it: `advantage.explore` 2
 * (the arms no answer pulled join each decision's group: train/explored-answers.ts), measured from
 * run_cc2220fd27944165's warm start on two threads (docs/results.md, "Bandit"): at seed 1
 * (run_a5c9bdde35464788) step 100's weights scored 6.380 on the 300 held-out seeds (normalised
 * 0.91, where two runs of the same seed without it ended at 0.45 and 0.53) but the default average
 * of steps 60–100 0.66 (0.60 without); at seed 2 (run_49cda6ed99b6421f, averaging steps 90–100)
 * 0.54, its step-100 weights 0.54 (at step 70 0.64, where the same seed without explore,
 * run_77af3d82c7054ca9, had 0.34, yet handed over 0.89 at step 100). Not a default. Measured without
 * explore (seed 1,
 * run_cc2220fd27944165, one thread beside other runs, 6,504 s): handed over 5.92 [5.61, 6.23] on 300
 * held-out seeds (random 5.17, warm start 5.16, the rule greedy 6.23, oracle 6.50: normalised 0.56;
 * regret 1.65), where at β 1 for 30 steps it handed over 5.28 (0.08). Greedy on 64 seeds: 5.63 at
 * step 0, 5.58 at 20 and 40, 6.17 at 60, 6.41 at 80, 6.44 at 100. With pulls scored by their
 * posterior mean instead of the hidden probability (this build), from the same warm start: 5.98
 * [5.67, 6.28] (0.60; run_1e8703d79b21463d, 3,514 s on two threads), no measurable change. From
 * that warm start β 0.03 handed over 0.57 (every decision's 8 answers tied from step ~40, so the
 * estimator had nothing to train), β 0.3 kept the sampled pulls at random's level for 50 steps, and
 * 16 answers a decision (no slower a step) gave the same greedy returns at steps 40 and 60, and
 * sampling temperature 1.5 (rollouts scored at it) handed over −0.03 (docs/results.md, "Bandit").
 */
export function banditTrainPreset(options: Record<string, unknown>): Record<string, unknown> {
  const preset = denseAtBetaTenth(options, 100);
  if (options.report === true) return preset;
  return { ...preset, checkpointEvery: 10, select: { episodes: 1000 } };
}

/** The dense preset with the KL's weight at 0.1 for `steps` steps (report runs keep the episode preset). */
function denseAtBetaTenth(options: Record<string, unknown>, steps: number): Record<string, unknown> {
  const dense = denseTrainPreset(options);
  if (options.report === true) return dense;
  return { ...dense, steps, loss: { ...(dense.loss as Record<string, unknown>), klBeta: 0.1 } };
}
