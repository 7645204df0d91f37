"""The decoding methods' display names (torch-free): what the chapters time and tabulate, and
what the book's pages and headline rows name without loading a model runtime. The methods
themselves are :mod:`cadlib.decoding.methods`."""

from __future__ import annotations

__all__ = ["METHODS", "DRAFTED", "DRAFTED_SETTING", "TIMED", "COPY_AS_DECODE"]

#: The methods' display names, in the order the chapters run and tabulate them.
METHODS = ("autoregressive", "prompt lookup", "Copy-as-Decode")
#: Copy-as-Decode with the decoder's drafts on (issue 17 §3), and the accounting's name of
#: that setting (:data:`cadlib.costs.accounting.COMPOSITIONS`).
DRAFTED, DRAFTED_SETTING = "Copy-as-Decode +drafts", "m=0 +cursor +headers"
#: The methods the chapters time (6 and 6b): the three of the paper's comparison, then
#: Copy-as-Decode with its drafts on.
TIMED = (*METHODS, DRAFTED)
#: The Copy-as-Decode decoders among them (a goal takes the faster one as built).
COPY_AS_DECODE = ("Copy-as-Decode", DRAFTED)
