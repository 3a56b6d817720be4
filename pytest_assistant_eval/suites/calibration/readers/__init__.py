"""Reading text as a careful person does: numbers with units, dates and times, wording.

Shared by the simulated user (which reads an assistant's proposal before answering it),
the reference assistants and the checks (which read answers and reports), so all three
understand the same forms. It only reads; it never decides an answer or a verdict.
"""
