"""Teams: members with roles, invitation links, assigned decks with pacing, team-owned decks,
and the lead's dashboard. Plain Python over a session; the caller owns the transaction."""
