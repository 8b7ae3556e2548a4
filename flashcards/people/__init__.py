"""People: accounts, passwords, API tokens, sign-in limits and how names are compared.
Plain Python, no Flask.
"""
