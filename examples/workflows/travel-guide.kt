/**
 * Travel guide — written exactly as a JVM Hensu workflow file (`.kt`), to show that such files
 * compile unmodified. Flow: research → draft ┐
 *                                           └→ critique → done
 */
fun workflow() = workflow("Travel Guide") {
    description = "Research a mountain, draft a guide – then critique it"
    version = "1.2.0"

    state {
        input("mountain_name", VarType.STRING)
        variable("facts", VarType.STRING, "key facts about the mountain")
        variable("guide", VarType.STRING, "the travel guide")
    }

    agents {
        agent("researcher") {
            role = "Geographer"
            model = Models.GEMINI_3_1_PRO
            temperature = 0.2
        }
        agent("writer") {
            role = "Travel writer"
            model = Models.CLAUDE_SONNET_4_5
            maxTokens = 2048
            instructions = "Write warmly — but stay accurate."
        }
        agent("critic") { role = "Critic"; model = Models.GPT_4O; topP = 0.9 }
    }

    graph {
        start at "research"

        node("research") {
            agent = "researcher"
            prompt = """
                List facts about {mountain_name}: height, first ascent, best season.
                Respond as JSON: {"facts": "..."}
            """.trimIndent()
            writes("facts")
            onSuccess goto "draft"
        }

        node("draft") {
            agent = "writer"
            prompt = """
                Write a travel guide for {mountain_name} using these facts:
                {facts}
            """.trimIndent()
            writes("guide")
            onSuccess goto "critique"
        }

        node("critique") {
            agent = "critic"
            prompt = "Critique this guide:\n\n{guide}"
            review(ReviewMode.DISABLED)
            onScore {
                whenScore greaterThanOrEqual 75.0 goto "end"
                whenScore lessThan 75.0 revise "draft" retry 2 otherwise "end"
            }
        }

        end("end")
    }
}
