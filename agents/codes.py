"""Integer codes of the policy kinds, as the dispatcher's branches compare them."""

RANDOM = 0
LOWEST = 1
HIGHEST = 2
RULE = 3
MC = 4
PIMC = 5
ISMCTS = 6
