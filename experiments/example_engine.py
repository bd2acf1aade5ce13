"""A complete external engine in plain Python (no hearts_sim needed): the JSON-lines protocol of
``hearts-sim serve`` on stdin/stdout. It plays its lowest legal card and passes its highest.

    hearts-sim match "exec:python experiments/example_engine.py" random --deals 20
"""

import json
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def rank(card: str) -> int:
    return RANKS.index(card[:-1])


for line in sys.stdin:
    request = json.loads(line)
    if "legal" in request:  # hearts-sim sends the legal cards with every play request
        answer = {"play": min(request["legal"], key=rank)}
    else:  # a pass: the dealt hand's highest cards
        answer = {"pass": sorted(request["hand"], key=rank)[-request["rules"]["pass_count"] :]}
    print(json.dumps({"id": request["id"], **answer}), flush=True)
