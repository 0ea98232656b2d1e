package app

// ToolKeys and NewToolKeys expose the tool's key set to the tests.
type ToolKeys = toolKeys

var NewToolKeys = newToolKeys
