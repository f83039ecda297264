/**
 * Plays one multi-turn episode: the policy speaks, each action is parsed as the environment
 * parses it, a probe runs through the `probe` port (read-only), the observation goes back as the
 * environment writes it, until the solution or the turn limit. Every turn is kept.
 */
import { isDone, observationText, parseSqlAction, verifyFormat, type SkyrlSqlEnv } from './skyrl-sql.ts';
import type { ChatMessage, EndReason, Episode, EpisodePorts, EpisodeTurn } from './types.ts';
import { runVerlEpisode, type VerlSqlEnv } from './verl-sql.ts';

/** The environments the runner plays: SkyRL-SQL's tags, the verl tutorial's tool calls. */
export type EpisodeEnv = SkyrlSqlEnv | VerlSqlEnv;

interface EpisodeSpec {
  env: EpisodeEnv;
  /** The question's database (for the error text's path). */
  dbId: string;
}

function firstSolution(action: string): string | null {
  const at = action.indexOf('<solution>');
  if (at < 0) return null;
  const end = action.indexOf('</solution>', at);
  return end < 0 ? null : action.slice(at + '<solution>'.length, end).trim();
}

function engineFailure(envId: string, turns: EpisodeTurn[], error: string): Episode {
  return {
    envId,
    turns,
    turnsUsed: turns.length,
    probesFailed: turns.filter((t) => t.probe !== null && (t.probe.error !== undefined || t.probe.timedOut === true))
      .length,
    finalSql: null,
    endReason: 'engine-error',
    formatValid: false,
    presetReward: null,
    error,
  };
}

export async function runEpisode(
  spec: EpisodeSpec,
  ports: EpisodePorts,
  initialMessages: readonly ChatMessage[],
): Promise<Episode> {
  const { env } = spec;
  if (env.kind === 'verl-sql') return runVerlEpisode(env, ports, initialMessages);
  const turns: EpisodeTurn[] = [];
  // The environment's chat history: actions and observations, without the prompt (env.py).
  const history: string[] = [];
  let lastAction: string;
  for (let n = 1; ; n++) {
    const start = ports.now();
    const messages: ChatMessage[] = [...initialMessages];
    if (env.conversation) {
      turns.forEach((t) => {
        messages.push({ role: 'assistant', content: t.text });
        if (t.observation !== null) messages.push({ role: 'user', content: t.observation });
      });
    } else if (history.length > 0) messages.push({ role: 'assistant', content: history.join('') });
    let reply: Awaited<ReturnType<EpisodePorts['chat']>>;
    try {
      reply = await ports.chat(messages, {
        stop: env.stop,
        continueFinal: !env.conversation && history.length > 0,
      });
    } catch (err) {
      // The engine failed: the episode ends here, its turns so far kept, with no answer.
      return engineFailure(env.kind, turns, err instanceof Error ? err.message : String(err));
    }
    let text = reply.text;
    if (reply.stoppedBy && !text.endsWith(reply.stoppedBy)) text += reply.stoppedBy;
    lastAction = text;
    history.push(text);
    const tokens = reply.tokens ?? null;
    if (isDone(text, n, env.maxTurns)) {
      turns.push({ text, tokens, probeSql: null, probe: null, observation: null, ms: ports.now() - start });
      break;
    }
    const sql = parseSqlAction(text);
    const probe = sql === null ? null : await ports.probe(sql, { timeoutMs: env.probeTimeoutMs });
    const observation = observationText(env, spec.dbId, sql, probe, env.maxTurns - n);
    history.push(observation);
    turns.push({ text, tokens, probeSql: sql, probe, observation, ms: ports.now() - start });
  }
  const format = verifyFormat(history.join(''));
  const hasSolution = lastAction.includes('<solution>') && lastAction.includes('</solution>');
  const endReason: EndReason = !hasSolution ? 'turn-limit' : format.valid ? 'solution' : 'format-failure';
  const finalSql = format.valid ? format.solution : firstSolution(lastAction);
  let presetReward: number | null = null;
  if (!format.valid) presetReward = -1;
  else if (ports.judge) presetReward = (await ports.judge(format.solution ?? '')) ? 1 : 0;
  return {
    envId: env.kind,
    turns,
    turnsUsed: turns.length,
    probesFailed: turns.filter((t) => t.probe !== null && (t.probe.error !== undefined || t.probe.timedOut === true))
      .length,
    finalSql,
    endReason,
    formatValid: format.valid,
    presetReward,
  };
}
