"""A complete Python agent: it ducks when it can and dumps its worst card when it cannot.

hearts-sim match "py:experiments/example_agent.py:Ducker" rule --deals 200
"""

from hearts_sim.core.cards import N_RANKS, QS


def rank(card):
    return card % N_RANKS


class Ducker:
    def choose_pass(self, obs):  # the three highest cards, the queen of spades first
        return sorted(obs.hand, key=lambda c: (c == QS, rank(c)), reverse=True)[: obs.rules.pass_count]

    def choose_play(self, obs):
        legal = list(obs.legal_moves())
        in_trick = len(obs.plays) % obs.rules.n_players
        if in_trick == 0:  # leading: the lowest card
            return min(legal, key=rank)
        trick = [card for _, card in obs.plays[-in_trick:]]
        led = trick[0] // N_RANKS
        winning = max(c for c in trick if c // N_RANKS == led)
        ducks = [c for c in legal if c // N_RANKS == led and c < winning]
        if ducks:  # the highest card that still loses the trick
            return max(ducks, key=rank)
        if legal[0] // N_RANKS != led:  # void: shed the queen, else the highest card
            return QS if QS in legal else max(legal, key=rank)
        return max(legal, key=rank) if in_trick == obs.rules.n_players - 1 else min(legal, key=rank)
