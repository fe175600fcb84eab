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
 * always-stick in 200 steps, and a 1-layer model could not learn to copy a digit). The tool names
 * stay, since an env may offer different tools per episode. A loaded checkpoint keeps this template,
 * so every consumer (eval, serve) shows the model exactly what it was trained on.
 */
export const DEFAULT_MODEL_CHAT_TEMPLATE = String.raw`{%- if tools %}
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
    {%- elif message.role == 'assistant' %}
        {{- '<|im_start|>assistant\n' }}
        {%- if message.reasoning_content %}
            {{- '<think>\n' + message.reasoning_content.strip('\n') + '\n</think>\n\n' }}
        {%- endif %}
        {%- if message.content %}
            {{- message.content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and message.content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or (messages[loop.index0 - 1].role != 'tool') %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != 'tool') %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}
`;
