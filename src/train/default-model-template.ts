import { CHATML_ASSISTANT_AND_TOOL_TURNS } from '../model/tokenizer/chatml-template.ts';

/**
 * The chat template of the default model `spindle train` builds: ChatML (the same turns, tool calls
 * and tool responses as the default template, prefix-stable) with a SHORT system turn that names the
 * offered tools and nothing else; the system message (the env's instructions, the tool schemas and
 * the call format) is not rendered.
 *
 * Why: the default model starts from random weights and learns only from the env (the format from
 * the warm start's demonstrations, the strategy from RL), so constant instructions carry no
 * information it can use; rendered, they made every prompt ~440 tokens of which the observation was
 * ~25, and a random-init model's attention, spread over the whole context, could not find the state
 * (measured: even supervised on oracle answers, Blackjack's greedy table did not leave
 * always-stick in 200 steps; the too-small init of the time, since fixed in src/model/params.ts,
 * was the other cause). The tool names
 * stay, since an env may offer different tools per episode. A loaded checkpoint keeps this template,
 * so every consumer (eval, serve) shows the model exactly what it was trained on.
 */
export const DEFAULT_MODEL_CHAT_TEMPLATE =
  String.raw`{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- for tool in tools %}
        {%- if not loop.first %}{{- ' ' }}{%- endif %}
        {{- tool.function.name if tool.function else tool.name }}
    {%- endfor %}
    {{- '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'user' %}
        {{- '<|im_start|>user\n' + message.content + '<|im_end|>\n' }}
` + CHATML_ASSISTANT_AND_TOOL_TURNS;
