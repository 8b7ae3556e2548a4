"""Flask glue shared by the JSON API and the HTML views: the request's unit of work, its
guards and the policies it applies.
"""
