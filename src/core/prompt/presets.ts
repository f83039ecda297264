/**
 * Policy presets: everything a published evaluation of a text-to-SQL policy fixes, as data — the
 * chat messages (system and user text with the schema's rendering), an assistant prefill, stop
 * strings, the extraction rule, the sampling, and for multi-turn policies the environment
 * (`MultiTurnSpec`). Named and versioned like the prompt templates: a preset never changes once
 * a run has used it; an edit is a new id. `presetFingerprint` identifies the content.
 *
 * Text fields use the templates' mustache subset (`{{schema}}`, `{{question}}`, `{{evidence}}`,
 * `{{dialect}}`, `{{#evidence}}...{{/evidence}}`). Each preset reproduces its original's prompt
 * byte for byte (tests/core/prompt/presets.test.ts against fixtures made by the original Python;
 * sources and commits in docs/presets.md).
 */
import type { ChatMessage } from '../engine/engine.ts';
import { renderTemplateText, BIRD_MINIDEV_V1, type TemplateValues } from './templates.ts';
import { WorkbenchError } from '../errors.ts';

type PresetSchemaRenderer =
  /** BIRD's `generate_schema_prompt_sqlite`: CREATE TABLE statements as stored (render-schema.ts). */
  | 'bird-create-table'
  /** OmniSQL's `obtain_db_details` over tables.json with example values (omnisql-schema.ts). */
  | 'omnisql-ddl';

interface PresetSchemaSpec {
  renderer: PresetSchemaRenderer;
  /** bird-create-table: sample rows per table. */
  sampleRows: number;
  /** bird-create-table: our BIRD column descriptions. */
  descriptions: boolean;
  /** omnisql-ddl: distinct example values sampled per column (`--value_limit_num`). */
  valueLimit: number;
  /** omnisql-ddl: OmniSQL's BM25 value retrieval (pyserini) is not reproduced. */
  valueRetrieval: 'none';
}

/**
 * How `{{question}}` is filled: the question alone, or OmniSQL's `evidence + "\n" + question`
 * (the question alone when the evidence is blank).
 */
type PresetQuestionText = 'question' | 'evidence-newline-question';

/**
 * How the SQL is taken from a completion (for multi-turn presets: from the whole episode's text,
 * as the original reward reads it):
 * - `app-default`: the app's `extractSql` (think stripped, <answer>, <solution>, last fence, SELECT fallback);
 * - `last-sql-fence`: OmniSQL/Arctic `parse_response`: the last ```sql block (regex ```sql\s*(.*?)\s*```), stripped; none → no SQL;
 * - `skyrl-solution`: SkyRL's `verify_format_and_extract`: exactly one <solution>...</solution>, no think/sql/observation tag inside, at least one <think>...</think>, every </observation> followed by <think>;
 * - `verl-answer`: the verl tutorial's `extract_sql_solution`: exactly one <answer> and one </answer>, no think/tool_call/tool_response tag inside.
 */
export type PresetExtractionRule = 'app-default' | 'last-sql-fence' | 'skyrl-solution' | 'verl-answer';

interface PresetSampling {
  /** Samples per question of the default evaluation (1 = greedy). */
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  /** The published self-consistency setting: `greedy` greedy samples plus `sampled` at `temperature`; null when none is published. */
  selfConsistency: { greedy: number; sampled: number; temperature: number; topP: number } | null;
}

/**
 * The environment of a multi-turn policy, as plain data (the episode runner interprets it).
 * Observation text templates use `{{result}}`, `{{turnsLeft}}`, `{{sql}}`.
 */
interface MultiTurnSpec {
  /** Assistant turns at most (the limit ends the episode). */
  maxTurns: number;
  probeTimeoutMs: number;
  /** A probe result longer than this (characters) is cut to `truncateToRows` rows. */
  maxObservationChars: number;
  truncateToRows: number;
  /** Tag that carries a probe (`sql` for <sql>...</sql>), or the tool's name for function-calling policies. */
  probeTag: string;
  probeStyle: 'tag' | 'tool-call';
  /** Tag of the final answer (`solution`, `answer`). */
  solutionTag: string;
  /** The whole observation message around the result. */
  observationTemplate: string;
  /** Prefix before a result cut to `truncateToRows` rows. */
  truncatedPrefix: string;
  /** Observation of a timed-out probe. */
  timeoutTemplate: string;
  /** Observation when a turn has neither a probe nor an answer (null: none is sent). */
  invalidActionText: string | null;
  /** "You have N turns left" text, part of `observationTemplate` here (null when none). */
  turnsLeftTemplate: string | null;
  /** Role of observation messages. */
  observationRole: 'user' | 'tool';
  /** At the turn limit, ask once more for the answer with `finalSummaryPrompt`. */
  finalSummary: boolean;
  finalSummaryPrompt: string | null;
  /** The preset's own reward (beside the run's EX): `skyrl-format-ex` (−1 format, 0 wrong, 1 right) or `verl-answer-ex` (same values, verl's format rule). */
  rewardRule: 'skyrl-format-ex' | 'verl-answer-ex';
  /** Whether the reward reads the whole chat (SkyRL) or the last assistant text. */
  rewardReads: 'whole-chat' | 'last-assistant';
}

interface PresetSource {
  repo: string;
  commit: string;
  files: string[];
}

export interface PolicyPreset {
  /** Stable identifier ending in its version: `omnisql-v1`. */
  id: string;
  title: string;
  description: string;
  sources: PresetSource[];
  schema: PresetSchemaSpec;
  question: PresetQuestionText;
  /** The messages before the model's turn, in order; system and user roles. */
  messages: Array<{ role: 'system' | 'user'; content: string }>;
  /** Text the assistant turn starts with (the model continues it); '' for none. */
  prefill: string;
  /** Stop strings (the server's EOS stops generation in every preset). */
  stop: string[];
  /** Stop token ids the original passes to vLLM (Qwen2.5's <|im_end|> = 151645). */
  stopTokenIds: number[];
  extraction: PresetExtractionRule;
  sampling: PresetSampling;
  /** OpenAI-style tool definitions the original passes beside the messages (function-calling policies). */
  tools: unknown[];
  multiTurn: MultiTurnSpec | null;
}

const OMNISQL_USER =
  "Task Overview:\nYou are a data science expert. Below, you are provided with a database schema and a natural language question. Your task is to understand the schema and generate a valid SQL query to answer the question.\n\nDatabase Engine:\nSQLite\n\nDatabase Schema:\n{{schema}}\nThis schema describes the database's structure, including tables, columns, primary keys, foreign keys, and any relevant relationships or constraints.\n\nQuestion:\n{{question}}\n\nInstructions:\n- Make sure you only output the information that is asked in the question. If the question asks for a specific column, make sure to only include that column in the SELECT clause, nothing more.\n- The generated query should return all of the information asked in the question without any missing or extra information.\n- Before generating the final SQL query, please think through the steps of how to write the query.\n\nOutput Format:\nIn your answer, please enclose the generated SQL query in a code block:\n```sql\n-- Your SQL query\n```\n\nTake a deep breath and think step by step to find the correct SQL query.\n";

const ARCTIC_SYSTEM =
  'You are a data science expert. Below, you are provided with a database schema and a natural language question. Your task is to understand the schema and generate a valid SQL query to answer the question.';

const ARCTIC_USER =
  "Database Engine:\nSQLite\n\nDatabase Schema:\n{{schema}}\nThis schema describes the database's structure, including tables, columns, primary keys, foreign keys, and any relevant relationships or constraints.\n\nQuestion:\n{{question}}\n\nInstructions:\n- Make sure you only output the information that is asked in the question. If the question asks for a specific column, make sure to only include that column in the SELECT clause, nothing more.\n- The generated query should return all of the information asked in the question without any missing or extra information.\n- Before generating the final SQL query, please think through the steps of how to write the query.\n\nOutput Format:\nPlease provide a detailed chain-of-thought reasoning process and include your thought process within `<think>` tags. Your final answer should be enclosed within `<answer>` tags.\n\nEnsure that your SQL query follows the correct syntax and is formatted as follows:\n\n```sql\n-- Your SQL query here\n```\n\nExample format:\n<think> Step-by-step reasoning, including self-reflection and corrections if necessary. [Limited by 4K tokens] </think>\n<answer> Summary of the thought process leading to the final SQL query. [Limited by 1K tokens]\n\n```sql\nCorrect SQL query here\n```\n</answer>";

const SKYRL_SYSTEM =
  "\nTask Overview:\nYou are a data science expert. Below, you are provided with a database schema and a natural language question. Your task is to understand the schema and generate a valid SQL query to answer the question within limited turns. You should breakdown the problem, draft your reasoning process, and generate the solution.\n\nDatabase Engine:\nSQLite\n\nDatabase Schema:\n{db_details}\nThis schema describes the database's structure, including tables, columns, primary keys, foreign keys, and any relevant relationships or constraints.\n\nExternal Knowledge:\n{external_knowledge}\n\nQuestion:\n{question}\n\nInstructions:\n- Make sure you only output the information that is asked in the question. If the question asks for a specific column, make sure to only include that column in the SELECT clause, nothing more.\n- The generated query should return all of the information asked in the question without any missing or extra information.\n- Before generating the final SQL query, please think through the steps of how to write the query. It should include detailed considerations such as analisying questions, \nsummarizing relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, thinking of how to call SQL tools, and revisiting previous steps.\n\n\nFormat:\n- Conduct thinking inside <think>...</think> blocks every time you get new observation or information. \n- You can use SQL tool written within a single <sql>your sql</sql> block to explore or verify. SQL tool output will be shown as dataframe inside <observation>...</observation>. Based on this observation, you can think again and refine.\n- The returned dataframe will be truncated in 50 rows if observation is too long. \n- If you find no further exploration is needed or reaches max turns, you MUST directly provide the final SQL query solution inside <solution>...</solution>. \n\n------------------------ START OF EXAMPLE ------------------------\nQuestion: how many pigs are in the farm? \n    Database Schema:\n    Table: animals\n    - id (INTEGER, PRIMARY KEY)\n    - species (TEXT)\n    - age (INTEGER)\n    - name (TEXT)\n\n<think>I am querying how many pigs are in the farm. I will begin by checking if the 'animals' table exists and contains entries with species = 'pig'.</think>\n<sql>SELECT COUNT(*) FROM animals WHERE species = 'pig';</sql>\n<observation>\n+----------+\n| COUNT(*) |\n+----------+\n|   12     |\n+----------+\n</observation>\n<think>The result indicates that there are 12 pigs in the farm. Since the question asks for how many pigs, I can now output the final SQL as the solution.</think>\n<solution>SELECT COUNT(*) FROM animals WHERE species = 'pig';</solution>\n------------------------ END OF EXAMPLE ------------------------\n";

const VERL_BEFORE =
  'You are a data science expert. Your task is to understand database schemas and generate valid SQL queries to answer natural language questions using SQLite database engine. You must conduct reasoning inside <think> and </think> blocks every time you get new information. After reasoning, you need to explore or verify database information, you can call a SQL execution tool by <tool_call> execute_sql </tool_call> and it will return the query results between <tool_response> and </tool_response>. You can execute SQL queries as many times as you want to explore the database structure and data. If you find no further exploration is needed, you MUST return your final SQL query enclosed within the <answer> </answer> tags.';

const VERL_AFTER =
  'Remember, you can call the SQL execution tool to explore and verify database information. When you have gathered sufficient information, you should only output the SQL query itself inside the <answer> </answer> tags, not the results produced by executing the query.';

const OMNISQL_SOURCE: PresetSource = {
  repo: 'RUCKBReasoning/OmniSQL',
  commit: 'a66d732010c89fac4353488d1c59e0b06f92b742',
  files: [
    'train_and_evaluate/process_dataset.py',
    'train_and_evaluate/infer.py',
    'train_and_evaluate/auto_evaluation.py',
    'train_and_evaluate/eval_open_source_models.py',
  ],
};
const SKYRL_DATASET_SOURCE: PresetSource = {
  repo: 'NovaSky-AI/SkyRL',
  commit: '67ee38e8b8321d7a1347ad640ff2b538b7803430',
  files: ['skyrl-train/examples/text_to_sql/sql_dataset.py'],
};
const OMNISQL_SCHEMA: PresetSchemaSpec = {
  renderer: 'omnisql-ddl',
  sampleRows: 0,
  descriptions: false,
  valueLimit: 2,
  valueRetrieval: 'none',
};
/** SkyRL's user message: the schema, the external knowledge and the question after literal `{name}:` labels. */
const SKYRL_USER = '{db_details}:{{schema}};\n {external_knowledge}: {{evidence}};\n {question}: {{question}}';
const QWEN_IM_END = 151645;

export const BIRD_MINIDEV_PRESET: PolicyPreset = {
  id: 'bird-minidev-v1',
  title: 'BIRD mini-dev (official prompt)',
  description:
    "Today's default: BIRD mini-dev's own prompt (the bird-minidev-v1 template) as one user message, greedy, the app's SQL extraction.",
  sources: [
    {
      repo: 'bird-bench/mini_dev',
      commit: '4d970a9a97b172101840c661d74cc5a5e1c6ffa4',
      files: ['llm/src/prompt.py', 'llm/src/table_schema.py'],
    },
  ],
  schema: { renderer: 'bird-create-table', sampleRows: 0, descriptions: false, valueLimit: 0, valueRetrieval: 'none' },
  question: 'question',
  messages: [{ role: 'user', content: BIRD_MINIDEV_V1.user }],
  prefill: '',
  stop: [],
  stopTokenIds: [],
  extraction: 'app-default',
  sampling: { n: 1, temperature: 0, topP: 1, maxTokens: 1024, selfConsistency: null },
  tools: [],
  multiTurn: null,
};

export const OMNISQL_PRESET: PolicyPreset = {
  id: 'omnisql-v1',
  title: 'OmniSQL',
  description:
    "OmniSQL's evaluation: its prompt (process_dataset.py's input_prompt_template) with the schema as OmniSQL renders it (CREATE TABLE with column comments and 2 example values per column) as one user message; the last ```sql block is the answer; greedy, and 8 samples at T=0.8 for major voting.",
  sources: [OMNISQL_SOURCE],
  schema: OMNISQL_SCHEMA,
  question: 'evidence-newline-question',
  messages: [{ role: 'user', content: OMNISQL_USER }],
  prefill: '',
  stop: [],
  stopTokenIds: [QWEN_IM_END],
  extraction: 'last-sql-fence',
  sampling: {
    n: 1,
    temperature: 0,
    topP: 1,
    maxTokens: 2048,
    selfConsistency: { greedy: 1, sampled: 8, temperature: 0.8, topP: 1 },
  },
  tools: [],
  multiTurn: null,
};

export const ARCTIC_TEXT2SQL_R1_PRESET: PolicyPreset = {
  id: 'arctic-text2sql-r1-v1',
  title: 'Arctic-Text2SQL-R1',
  description:
    "Arctic-Text2SQL-R1's BIRD evaluation (bird_eval/infer.py): OmniSQL's schema and question in a system + user chat asking for <think> and <answer> with a ```sql block, the assistant turn pre-filled with 'Let me solve this step by step. \\n<think>', the last ```sql block extracted; greedy, or 8 samples at T=0.8 for self-consistency (infer.py's own defaults are n=4, T=1.0).",
  sources: [
    {
      repo: 'snowflakedb/ArcticTraining',
      commit: 'b28638e6c577ece34cc147ab3d45d27a7f66b33b',
      files: [
        'projects/arctic_text2sql_r1/bird_eval/infer.py',
        'projects/arctic_text2sql_r1/bird_eval/eval_open_source_models.py',
        'projects/arctic_text2sql_r1/bird_eval/auto_evaluation.py',
        'projects/arctic_text2sql_r1/data_preprocessing/process_dataset.py',
      ],
    },
  ],
  schema: OMNISQL_SCHEMA,
  question: 'evidence-newline-question',
  messages: [
    { role: 'system', content: ARCTIC_SYSTEM },
    { role: 'user', content: ARCTIC_USER },
  ],
  prefill: 'Let me solve this step by step. \n<think>',
  stop: [],
  stopTokenIds: [QWEN_IM_END],
  extraction: 'last-sql-fence',
  sampling: {
    n: 1,
    temperature: 0,
    topP: 1,
    maxTokens: 8192,
    selfConsistency: { greedy: 1, sampled: 8, temperature: 0.8, topP: 1 },
  },
  tools: [],
  multiTurn: null,
};

export const SKYRL_SQL_PRESET: PolicyPreset = {
  id: 'skyrl-sql-v1',
  title: 'SkyRL-SQL (multi-turn)',
  description:
    "SkyRL-SQL-7B's multi-turn episodes: SkyRL's system prompt (sent as written, with its literal {db_details} placeholders) and a user message with OmniSQL's schema, the evidence and the question; each <sql>...</sql> gets an <observation> with 'You have N turns left', 5 turns, 5 s per probe, results over 9,000 characters cut to 50 rows; the episode ends at <solution>...</solution>; reward on the whole chat: -1 bad format, 0 wrong, 1 right.",
  sources: [
    SKYRL_DATASET_SOURCE,
    {
      repo: 'NovaSky-AI/SkyRL',
      commit: 'a9564572eb8e91076be43c1bd5e4615e3de17265',
      files: [
        'skyrl-gym/skyrl_gym/envs/sql/env.py',
        'skyrl-gym/skyrl_gym/tools/sql.py',
        'skyrl-gym/skyrl_gym/envs/sql/utils.py',
        'examples/train/text_to_sql/run_skyrl_sql.sh',
        'skyrl/train/config/config.py',
      ],
    },
  ],
  schema: OMNISQL_SCHEMA,
  question: 'question',
  messages: [
    { role: 'system', content: SKYRL_SYSTEM },
    { role: 'user', content: SKYRL_USER },
  ],
  prefill: '',
  stop: ['</sql>', '</solution>'],
  stopTokenIds: [],
  extraction: 'skyrl-solution',
  sampling: { n: 1, temperature: 0, topP: 1, maxTokens: 3000, selfConsistency: null },
  tools: [],
  multiTurn: {
    maxTurns: 5,
    probeTimeoutMs: 5000,
    maxObservationChars: 9000,
    truncateToRows: 50,
    probeTag: 'sql',
    probeStyle: 'tag',
    solutionTag: 'solution',
    observationTemplate: '\n\n<observation>{{result}}\n{{turnsLeft}}</observation>\n\n',
    truncatedPrefix: 'Truncated to 50 lines since returned response too long: ',
    timeoutTemplate: 'SQL Timeout:\n{{sql}}',
    invalidActionText:
      'Your previous action is invalid. Follow the format of outputting thinking process and sql tool, and try again.',
    turnsLeftTemplate: '<reminder>You have {{turnsLeft}} turns left to complete the task.</reminder>',
    observationRole: 'user',
    finalSummary: false,
    finalSummaryPrompt: null,
    rewardRule: 'skyrl-format-ex',
    rewardReads: 'whole-chat',
  },
};

export const VERL_TEXT2SQL_PRESET: PolicyPreset = {
  id: 'verl-text2sql-v1',
  title: 'verl multi-turn Text2SQL tutorial',
  description:
    "The verl multi-turn Text2SQL tutorial (mair-hub rl-tutorial/text2sql): 'You are a helpful assistant.' and a user message wrapping SkyRL's user text with instructions for the execute_sql tool and <answer>; the tool runs 30 s, 50 rows or 9,000 characters; 6 assistant turns, optional final summary; reward -1 without an answer, 0 wrong, 1 right; 8 samples at T=1.0.",
  sources: [
    {
      repo: 'nvidia-china-sae/mair-hub',
      commit: '374bc4909857e37426d695efb0ca4b3e07f84cd4',
      files: [
        'rl-tutorial/text2sql/preprocess_sql_dataset.py',
        'rl-tutorial/text2sql/config/tool_config/sql_tool_config.yaml',
        'rl-tutorial/text2sql/config/text2sql_multiturn_grpo.yaml',
        'rl-tutorial/text2sql/run_qwen2.5-7b_text2sql.sh',
        'rl-tutorial/text2sql/run_qwen2.5-7b_text2sql_final_summary.sh',
        'rl-tutorial/text2sql/text2sql_reward_func.py',
        'rl-tutorial/text2sql/sql_tool.py',
      ],
    },
    SKYRL_DATASET_SOURCE,
  ],
  schema: OMNISQL_SCHEMA,
  question: 'question',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: `${VERL_BEFORE}\n${SKYRL_USER}\n${VERL_AFTER}` },
  ],
  prefill: '',
  stop: [],
  stopTokenIds: [],
  extraction: 'verl-answer',
  sampling: { n: 8, temperature: 1, topP: 1, maxTokens: 4096, selfConsistency: null },
  tools: [
    {
      type: 'function',
      function: {
        name: 'execute_sql',
        description: 'Executes SQL queries and returns the results.',
        parameters: {
          type: 'object',
          properties: { sql_query: { type: 'string', description: 'SQL query to be executed' } },
          required: ['sql_query'],
        },
      },
    },
  ],
  multiTurn: {
    maxTurns: 6,
    probeTimeoutMs: 30000,
    maxObservationChars: 9000,
    truncateToRows: 50,
    probeTag: 'execute_sql',
    probeStyle: 'tool-call',
    solutionTag: 'answer',
    observationTemplate: '{{result}}',
    truncatedPrefix: '',
    timeoutTemplate: '{{result}}',
    invalidActionText: null,
    turnsLeftTemplate: null,
    observationRole: 'tool',
    finalSummary: false,
    finalSummaryPrompt:
      'You have reached the maximum number of interaction turns. Please provide your final answer directly using the <answer></answer> tags.',
    rewardRule: 'verl-answer-ex',
    rewardReads: 'whole-chat',
  },
};

export const BUILTIN_PRESETS: readonly PolicyPreset[] = [
  BIRD_MINIDEV_PRESET,
  OMNISQL_PRESET,
  ARCTIC_TEXT2SQL_R1_PRESET,
  SKYRL_SQL_PRESET,
  VERL_TEXT2SQL_PRESET,
];

export function findPreset(id: string, extra: readonly PolicyPreset[] = []): PolicyPreset | undefined {
  return [...BUILTIN_PRESETS, ...extra].find((p) => p.id === id);
}

/** The preset by id, or an error that lists the known ids. */
export function requirePreset(id: string, extra: readonly PolicyPreset[] = []): PolicyPreset {
  const found = findPreset(id, extra);
  if (found) return found;
  const known = [...BUILTIN_PRESETS, ...extra].map((p) => p.id).join(', ');
  throw new WorkbenchError('NOT_FOUND', `unknown preset "${id}": choose one of ${known}`);
}

/** FNV-1a of the preset's whole content: two runs with the same id and fingerprint used the same settings. */
export function presetFingerprint(p: PolicyPreset): string {
  const text = JSON.stringify(p);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** What a preset's prompt is filled with; `schema` is rendered by the preset's renderer (see preset-schema.ts). */
interface PresetQuestion {
  question: string;
  evidence: string;
}

interface RenderedPreset {
  messages: ChatMessage[];
  /** Text the assistant turn starts with ('' for none); engines continue it. */
  prefill: string;
}

function questionText(preset: PolicyPreset, q: PresetQuestion): string {
  if (preset.question === 'evidence-newline-question' && q.evidence.trim() !== '')
    return `${q.evidence}\n${q.question}`;
  return q.question;
}

/** The chat messages (and prefill) of one question under `preset`. */
export function renderPresetMessages(
  preset: PolicyPreset,
  q: PresetQuestion,
  schema: string,
  dialect = 'SQLite',
): RenderedPreset {
  const values: TemplateValues = { schema, question: questionText(preset, q), evidence: q.evidence, dialect };
  return {
    messages: preset.messages.map((m) => ({ role: m.role, content: renderTemplateText(m.content, values) })),
    prefill: preset.prefill,
  };
}
