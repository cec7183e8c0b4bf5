"""A tiny Qwen2 model and an offline byte-level BPE tokenizer, for tests and CPU smoke runs.

Nothing is downloaded: the tokenizer is trained with the ``tokenizers`` library on a
few strings, and the model is built from a ``Qwen2Config`` (hidden size 16, 2 layers).

For a warm start the tokenizer can also learn the action protocol: the fixed JSON text
between an action's string values (``'", "search": "'``, ``'```json\n{"action": "'``)
becomes one token each (:func:`protocol_pieces`), so a completion is about half as many
tokens, nearly all of them the content a policy has to choose. A tiny model trained
from scratch on a few dozen completions then gets the format right far more often
(measured in ``tests/integrations/test_warmstart.py``).
The chat template is TRL's Qwen2.5 template when TRL is installed (so TRL recognises
it, renders tools and parses ``<tool_call>`` replies), else a plain ChatML template.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

__all__ = [
    "CHATML_TEMPLATE",
    "SPECIAL_TOKENS",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "protocol_pieces",
]

#: Special tokens of the Qwen chat format (ids 0..n-1 in this order).
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
)

#: Fallback ChatML template (no tools) used when TRL's Qwen2.5 template is unavailable.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)

_CORPUS = (
    "def answer():\n    return 0\n",
    '```json\n[{"action": "edit", "edits": [{"path": "pkg/mod.py", "search": "a", "replace": "b"}]}]\n```',
    '{"action": "submit"} {"action": "run_tests"} {"action": "lint"}',
    "You are an expert software engineer. Fix the bug so the tests pass.",
    '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>',
    "import pytest\n\ndef test_answer():\n    assert answer() == 42\n",
)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def protocol_pieces(texts: Iterable[str], *, min_count: int = 2) -> list[str]:
    """The fixed text of JSON action texts: everything between their string values.

    Keys stay in (``'", "replace": "'`` is one piece) and special tokens are cut out
    (they keep their own ids). Pieces seen fewer than ``min_count`` times are dropped.
    Most frequent first.
    """
    specials = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
    counts: Counter[str] = Counter()
    for text in texts:
        pieces: list[str] = []
        last = 0
        for match in _JSON_STRING.finditer(text):
            if text[match.end() : match.end() + 1] == ":":  # a key: part of the skeleton
                continue
            pieces.append(text[last : match.start() + 1])  # up to the opening quote
            last = match.end() - 1  # from the closing quote
        pieces.append(text[last:])
        for piece in pieces:
            counts.update(p for p in specials.split(piece) if p.strip())
    return [piece for piece, count in counts.most_common() if count >= min_count]


def _chat_template() -> str:
    try:
        from trl.chat_template_utils import qwen2_5_chat_template
    except ImportError:  # TRL not installed: a template without tool support
        return CHATML_TEMPLATE
    return qwen2_5_chat_template


def build_tiny_tokenizer(
    vocab_size: int = 512, corpus: Iterable[str] = (), protocol: Iterable[str] = ()
) -> Any:
    """A ``PreTrainedTokenizerFast`` (byte-level BPE, left padding, Qwen chat template).

    ``corpus`` adds training text (e.g. a family's prompts and actions) so that the
    merges fit the data a warm start trains on; without it a fixed snippet set is used.
    ``protocol`` are action texts (completions, rendered tool calls) whose
    :func:`protocol_pieces` become tokens of their own, on top of ``vocab_size``.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        # Every byte is in the vocabulary, so any text (code, Unicode) round-trips.
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([*(_CORPUS * 4), *corpus], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        additional_special_tokens=list(SPECIAL_TOKENS[1:]),
    )
    fast.chat_template = _chat_template()
    pieces = protocol_pieces(protocol)
    if pieces:
        fast.add_tokens([AddedToken(p, normalized=False, special=False) for p in pieces])
    return fast


def build_tiny_model(
    tokenizer: Any,
    *,
    hidden_size: int = 16,
    num_layers: int = 2,
    num_heads: int = 2,
    seed: int = 0,
) -> Any:
    """A randomly initialised ``Qwen2ForCausalLM`` sized for ``tokenizer``."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=1,
        max_position_embeddings=32_768,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
