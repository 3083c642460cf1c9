"""Hand-written questions about the fixture articles (:mod:`okgen.testing.news`), as an LLM
generator would write them: four per article, each naming the date, with same-kind choices and
a verbatim evidence sentence, so that they pass okgen's checks.

:class:`~okgen.testing.llm_agents.AgentResponder` serves them (``questions=fixture_questions()``)
where a test needs a generator that writes several questions per article whatever the offline
generator's yield on these short articles (it writes 0 to 2 each and is still being tuned).
``{date}`` stands for the article's date ("November 21, 2026").
"""

from __future__ import annotations

from typing import Any

# title -> [(question, answer, three other choices, evidence sentence)]
_QUESTIONS: dict[str, list[tuple[str, str, tuple[str, str, str], str]]] = {
    "Halvorsen Energy to build $2.3 billion battery plant in Gdansk": [
        ("How much will Halvorsen Energy spend on the battery factory near Gdansk it announced on {date}?",
         "$2.3 billion", ("$1.9 billion", "$3.2 billion", "$540 million"),
         "Halvorsen Energy will build a $2.3 billion battery factory near the Polish port of Gdansk"),
        ("How many people will Halvorsen Energy's Gdansk battery plant employ at full production, as announced on {date}?",
         "1,800", ("1,150", "2,400", "870"),
         "Chief executive Ingrid Solberg said the plant would employ 1,800 people when it reaches full production in 2029."),
        ("Shares in Halvorsen Energy rose by what percentage in Oslo after its battery plant announcement on {date}?",
         "6.4 percent", ("3 percent", "14 percent", "4.6 percent"),
         "Shares in Halvorsen Energy rose 6.4 percent in Oslo after the factory announcement."),
        ("Who is the chief executive of Halvorsen Energy, which announced a battery plant in Gdansk on {date}?",
         "Ingrid Solberg", ("Sanne de Vries", "Katrin Albers", "Beatriz Almeida"),
         "Chief executive Ingrid Solberg said the plant would employ 1,800 people when it reaches full production in 2029."),
    ],
    "Kestrel Airways cancels 240 flights as pilots strike": [
        ("How many flights did Kestrel Airways cancel on {date} as its pilots went on strike?",
         "240", ("96", "140", "700"),
         "Kestrel Airways cancelled 240 flights on Saturday as pilots began a 48-hour strike over pay"),
        ("About how many passengers were stranded across Europe by the Kestrel Airways pilots' strike on {date}?",
         "31,000", ("12,400", "11,500", "870,000"),
         "leaving about 31,000 passengers stranded across Europe."),
        ("What pay rise had Kestrel Airways pilots been offered before their strike began on {date}?",
         "3 percent", ("6.4 percent", "14 percent", "9 percent"),
         "pilots had been offered a rise of 3 percent while inflation ran well above that."),
        ("Which transport secretary urged Kestrel Airways and its pilots to resume talks on {date}?",
         "Rahul Mehta", ("Tamsin Whitlock", "Hiroshi Tanaka", "Dario Marchetti"),
         "Transport Secretary Rahul Mehta urged both sides to return to the table."),
    ],
    "Lisbon unveils plan to plant 50,000 trees by 2030": [
        ("Which city's council approved a plan to plant 50,000 trees by 2030, as announced on {date}?",
         "Lisbon", ("Gdansk", "Rotterdam", "Antwerp"),
         "Lisbon's city council approved a plan on Friday to plant 50,000 trees across the Portuguese capital by 2030"),
        ("How many trees does the plan approved by Lisbon's city council on {date} aim to plant by 2030?",
         "50,000", ("1,150", "12,400", "31,000"),
         "Lisbon's city council approved a plan on Friday to plant 50,000 trees across the Portuguese capital by 2030"),
        ("What will the tree-planting programme Lisbon approved on {date} cost, according to its mayor?",
         "€68 million", ("€45 million", "€82 million", "€30 million"),
         "Mayor Beatriz Almeida said the programme would cost €68 million"),
        ("Which mayor spoke for the tree-planting plan that Lisbon's council approved on {date}?",
         "Beatriz Almeida", ("Olivia Harrington", "Ingrid Solberg", "Elena Ramos"),
         "Mayor Beatriz Almeida said the programme would cost €68 million"),
    ],
    "Brightline Robotics raises $410 million for warehouse robots": [
        ("How much did Brightline Robotics raise in the funding round it announced on {date}?",
         "$410 million", ("$120 million", "$540 million", "$38 million"),
         "has raised $410 million in a funding round led by Meridian Capital"),
        ("Which firm led the funding round of Brightline Robotics announced on {date}?",
         "Meridian Capital", ("Atlas Semiconductors", "Lumen Power", "Orion Space Systems"),
         "has raised $410 million in a funding round led by Meridian Capital"),
        ("In how many warehouses did Brightline Robotics' forklifts run as of {date}?",
         "140", ("45", "350", "600"),
         "Brightline's robots now run in 140 warehouses, up from 45 a year earlier."),
        ("What revenue did Brightline Robotics expect for 2026, as its chief executive said on {date}?",
         "$120 million", ("$410 million", "$68 million", "$3.2 billion"),
         "Marchetti said Brightline expected revenue of $120 million in 2026."),
    ],
    "Floods in Cebu force thousands from their homes": [
        ("How many people had floods in Cebu forced from their homes as of {date}?",
         "12,400", ("31,000", "11,500", "1,800"),
         "Floods in the central Philippine province of Cebu have forced 12,400 people from their homes"),
        ("How much rain fell in Cebu City in 24 hours, as PAGASA said on {date}?",
         "310 millimetres", ("96 millimetres", "140 millimetres", "540 millimetres"),
         "The national weather agency PAGASA said rainfall in Cebu City reached 310 millimetres in 24 hours"),
        ("Which governor declared a state of calamity in Cebu after the floods of {date}?",
         "Elena Ramos", ("Olivia Harrington", "Beatriz Almeida", "Katrin Albers"),
         "Governor Elena Ramos declared a state of calamity, which releases emergency funds for relief."),
        ("How many volunteers had the Philippine Red Cross sent to Cebu's evacuation centres as of {date}?",
         "80", ("45", "240", "350"),
         "The Philippine Red Cross said it had sent 80 volunteers and 2,000 food packs to evacuation centres."),
    ],
    "Meridian Bank fined €45 million over data breach": [
        ("Which company did Portugal's data protection authority fine €45 million on {date}?",
         "Meridian Bank", ("Verdant Foods", "Lumen Power", "Atlas Semiconductors"),
         "Portugal's data protection authority fined Meridian Bank €45 million on Friday"),
        ("How many customers' records did the Meridian Bank data breach behind the fine of {date} expose?",
         "870,000", ("31,000", "12,400", "11,500"),
         "over a 2024 data breach that exposed the records of 870,000 customers."),
        ("How many days did Meridian Bank wait before reporting its data breach, as the regulator said on {date}?",
         "11", ("9", "14", "48"),
         "had waited 11 days before reporting the breach."),
        ("How much has Meridian Bank invested in security since its breach, as its risk chief said on {date}?",
         "€30 million", ("€45 million", "€68 million", "€82 million"),
         "Chief risk officer Henrik Lindqvist said the bank had since invested €30 million in security."),
    ],
    "Orion Space Systems delays Kestrel satellite launch": [
        ("To which date did Orion Space Systems postpone its Kestrel weather satellite's launch, as announced on {date}?",
         "January 14, 2027", ("December 3, 2026", "March 2, 2027", "June 30, 2027"),
         "Orion Space Systems has postponed the launch of its Kestrel weather satellite to January 14, 2027"),
        ("What fault delayed Orion Space Systems' Kestrel satellite launch, as announced on {date}?",
         "a fault in a fuel valve", ("a cracked heat shield", "a damaged solar panel", "a failed battery cell"),
         "after engineers found a fault in a fuel valve, the company said on Friday."),
        ("From where was Orion Space Systems' Kestrel satellite due to lift off before the delay announced on {date}?",
         "French Guiana", ("Kazakhstan", "Florida", "New Zealand"),
         "was due to lift off from French Guiana on December 3."),
        ("How much had Orion Space Systems' Kestrel satellite mission cost as of {date}?",
         "€540 million", ("€410 million", "€82 million", "€1.9 billion"),
         "The delay is the second for the mission, which has cost about €540 million so far."),
    ],
    "Verdant Foods to cut 700 jobs in the Netherlands": [
        ("How many jobs will Verdant Foods cut in the Netherlands, as announced on {date}?",
         "700", ("1,800", "240", "350"),
         "Verdant Foods will close its Rotterdam factory and cut 700 jobs in the Netherlands"),
        ("In which city will Verdant Foods close its factory, as announced on {date}?",
         "Rotterdam", ("Eindhoven", "Utrecht", "Groningen"),
         "Verdant Foods will close its Rotterdam factory and cut 700 jobs in the Netherlands"),
        ("To which city's plant will Verdant Foods move its Dutch production by the end of 2027, as announced on {date}?",
         "Antwerp", ("Gdansk", "Monterrey", "Edinburgh"),
         "The company said production would move to its plant in Antwerp by the end of 2027."),
        ("What net loss for the first half of 2026 had Verdant Foods reported as of {date}?",
         "€82 million", ("€45 million", "€68 million", "€30 million"),
         "Verdant Foods reported a net loss of €82 million for the first half of 2026."),
    ],
    "Germany approves 12 new wind farms in the North Sea": [
        ("How many new offshore wind farms in the North Sea did Germany's Federal Network Agency approve on {date}?",
         "12", ("9", "14", "96"),
         "Germany's Federal Network Agency approved 12 new offshore wind farms in the North Sea on Friday"),
        ("What combined capacity will the North Sea wind farms approved by Germany on {date} have?",
         "7.5 gigawatts", ("16 gigawatts", "9 gigawatts", "2.3 gigawatts"),
         "with a combined capacity of 7.5 gigawatts."),
        ("How much did developers commit to pay for seabed rights for the wind farms Germany approved on {date}?",
         "€1.9 billion", ("€540 million", "€2.3 billion", "€3.2 billion"),
         "The agency said developers had committed to paying €1.9 billion for the seabed rights."),
        ("Which economy minister said on {date} that Germany's new North Sea wind farms would power about 9 million homes?",
         "Katrin Albers", ("Ingrid Solberg", "Sanne de Vries", "Olivia Harrington"),
         "Economy Minister Katrin Albers said the projects would supply power to about 9 million homes from 2031."),
    ],
    "Toronto transit strike ends after 9 days": [
        ("How many days did the Toronto transit strike that ended on {date} last?",
         "9", ("11", "14", "48"),
         "ending a 9-day strike that halted buses and subway trains across Canada's largest city."),
        ("How many workers does the union whose members ended the Toronto transit strike on {date} represent?",
         "11,500", ("12,400", "31,000", "1,800"),
         "The union, which represents 11,500 workers, accepted a contract that raises wages by 14 percent over four years."),
        ("By how much will wages rise over four years under the contract that ended Toronto's transit strike on {date}?",
         "14 percent", ("3 percent", "6.4 percent", "9 percent"),
         "The union, which represents 11,500 workers, accepted a contract that raises wages by 14 percent over four years."),
        ("How much did the Toronto Transit Commission estimate that the strike ending on {date} cost it in lost fares?",
         "$38 million", ("$120 million", "$410 million", "$68 million"),
         "The Toronto Transit Commission estimated that the strike cost it about $38 million in lost fares."),
    ],
}


def fixture_questions() -> dict[str, list[dict[str, Any]]]:
    """Article title -> its questions in the generator's schema (``{date}`` not yet filled in)."""
    return {title: [{"question": q, "choices": [answer, *others], "answer": answer, "short_answer": answer,
                     "rationale": evidence, "evidence": evidence} for q, answer, others, evidence in items]
            for title, items in _QUESTIONS.items()}
