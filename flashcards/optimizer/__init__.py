"""Personal FSRS parameters: fitted to a person's own answers, adopted only when they predict
that person's later answers better than the parameters in force.

`items` turns review-log rows into FSRS training items (pure), `fit` fits and scores them with
the optional `fsrs-rs-python` package (loaded lazily, so the service runs without it), and
`store` keeps every fit with its scores and moves the parameters in force. `auto` finds who
(and which team deck) is due for a fit, `team` fits a team deck to its members' answers,
`reschedule` moves review cards to where the parameters in force put them, and `retention`
simulates the workload of each desired retention.
"""
