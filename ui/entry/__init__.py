"""Reading typed input: numbers (numbers), text fields (fields), table editors and their edit
messages (editors, edits), CSV (csv_io), the sizes each entrance accepts (limits), the vector
picker (picker), the frozen Inputs a page computes from (inputs) and the messages that name a
refused entry (errors).

Each entrance refuses what it cannot read exactly, with a message, and changes nothing else.
May import ln_core and teaching; in ui, only the session state its widgets are bound to, the
table labels (ui.draw.tables) and the caps (ui.server.caps). Never pages/.
"""
