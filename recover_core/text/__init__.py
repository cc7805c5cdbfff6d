"""A user's text and the spans over it: the span type, shapes of dates and numbers, checks on input."""
